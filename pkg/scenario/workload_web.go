package scenario

import "fmt"

// Page is a web workload's page: the HTML, then groups of objects, each
// group requested all at once when its dependency has arrived — the HTML
// (the browser's parser finds the stylesheets, scripts and images) or every
// object of an earlier group (the fonts a stylesheet names). Each object
// is one HTTP/3 request on its own stream with the group's RFC 9218
// priority (the "priority" request header), as a browser sends it. The
// HTML's priority is Chrome's for a navigation: urgency 0, incremental
// (HTMLUrgency, HTMLIncremental).
type Page struct {
	// HTMLBytes is the HTML document's size, bytes (> 0).
	HTMLBytes int64 `json:"html_bytes"`
	// Groups are the page's other objects, in dependency order.
	Groups []ObjectGroup `json:"groups"`
}

// ObjectGroup is Count objects of Bytes bytes each with one priority and one
// dependency.
type ObjectGroup struct {
	// Name labels the group ("css", "script-async"); unique in the page.
	Name string `json:"name"`
	// Count is the number of objects (> 0).
	Count int `json:"count"`
	// Bytes is each object's size, bytes (> 0).
	Bytes int64 `json:"bytes"`
	// After names the earlier group whose objects must all have arrived
	// before this group is requested; "" means the HTML.
	After string `json:"after,omitempty"`
	// Urgency is the RFC 9218 urgency of the requests, 0 (most urgent) to 7.
	Urgency uint8 `json:"urgency"`
	// Incremental is the RFC 9218 incremental flag of the requests.
	Incremental bool `json:"incremental,omitempty"`
}

// The HTML document's priority: Chrome requests a navigation at net
// priority HIGHEST, urgency 0, and the HTML is usable in parts.
const (
	HTMLUrgency     = 0
	HTMLIncremental = true
)

// Bounds of a page: every object is a stream and a record in the result.
const (
	maxPageObjects = 1000
	maxPageLoads   = 1000
)

// MedianPage is the median desktop page of the HTTP Archive's Web Almanac
// 2024, Page Weight chapter (October 2024 crawl; almanac.httparchive.org
// /en/2024/page-weight): 2,652 KB and 71 requests in all; by type, the
// median page holds 18 KB of HTML, 78 KB of CSS, 613 KB of JavaScript in 24
// requests, 131 KB of fonts and 1,054 KB of images in 18 requests. KB is
// taken as 1024 bytes. The chapter gives no request counts for CSS and
// fonts: 4 stylesheets and 3 fonts are ours, and the bytes of a type are
// split evenly over its requests. Requests of other types (the rest of the
// 71) are left out: the chapter gives no bytes for them. Per-type medians
// do not add up to the page median; this page is 1,894 KB in 50 requests.
//
// Priorities are Chrome's (Chromium's Blink TypeToPriority and
// ShouldLoadIncremental, mapped to RFC 9218 urgency by
// net::ConvertRequestPriorityToQuicPriority, urgency = HIGHEST − priority):
// stylesheets and fonts VeryHigh → urgency 0; scripts High → 1, async
// scripts Low → 3; images Low → 3, incremental ("Most content types can be
// operated on with partial data ... but a few need to be complete":
// stylesheets, scripts and fonts are not incremental). Half the scripts are
// parser-blocking in the document's head, half async: the split is ours.
// Visible images that Chrome boosts after layout are not modelled (a boost
// is a PRIORITY_UPDATE sent later; every image keeps urgency 3).
//
// Dependencies: stylesheets, scripts and images are found by parsing the
// HTML (requested when it has arrived); fonts when the stylesheets that
// name them have arrived.
func MedianPage() Page {
	const kb = 1024
	each := func(total, n int64) int64 { return total * kb / n }
	return Page{
		HTMLBytes: 18 * kb,
		Groups: []ObjectGroup{
			{Name: "css", Count: 4, Bytes: each(78, 4), Urgency: 0},
			{Name: "script", Count: 12, Bytes: each(613, 24), Urgency: 1},
			{Name: "script-async", Count: 12, Bytes: each(613, 24), Urgency: 3},
			{Name: "image", Count: 18, Bytes: each(1054, 18), Urgency: 3, Incremental: true},
			{Name: "font", Count: 3, Bytes: each(131, 3), After: "css", Urgency: 0},
		},
	}
}

// PageObject is one object of a page, in Objects' order.
type PageObject struct {
	Name        string // "html", or the group's name and index ("css-2")
	Group       int    // index in Page.Groups; -1 for the HTML
	After       int    // the group it waits for; -1: the HTML (none for the HTML itself)
	Bytes       int64  // size, bytes
	Urgency     uint8  // RFC 9218 urgency
	Incremental bool   // RFC 9218 incremental flag
}

// Objects lists the page's objects, the HTML first, then each group's in
// order. The page must be valid.
func (p Page) Objects() []PageObject {
	out := []PageObject{{Name: "html", Group: -1, After: -1, Bytes: p.HTMLBytes, Urgency: HTMLUrgency, Incremental: HTMLIncremental}}
	for g, gr := range p.Groups {
		after := p.groupIndex(gr.After)
		for k := range gr.Count {
			out = append(out, PageObject{Name: fmt.Sprintf("%s-%d", gr.Name, k+1), Group: g, After: after, Bytes: gr.Bytes, Urgency: gr.Urgency, Incremental: gr.Incremental})
		}
	}
	return out
}

// groupIndex is the index of the group named name, -1 for "" (the HTML) or
// an unknown name.
func (p Page) groupIndex(name string) int {
	for i, g := range p.Groups {
		if name != "" && g.Name == name {
			return i
		}
	}
	return -1
}

// TotalBytes is the page's size: the HTML and every object, bytes.
func (p Page) TotalBytes() int64 {
	n := p.HTMLBytes
	for _, g := range p.Groups {
		n += int64(g.Count) * g.Bytes
	}
	return n
}

// WebPage is the web workload's page: Page, or MedianPage() if nil.
func (w Workload) WebPage() Page {
	if w.Page != nil {
		return *w.Page
	}
	return MedianPage()
}

// PageLoads is Pages with its default (1) applied.
func (w Workload) PageLoads() int { return max(w.Pages, 1) }

func (c *checker) webWorkload(s Scenario) {
	w := s.Workload
	c.others(w, WorkloadWeb)
	if w.Pages < 0 || w.Pages > maxPageLoads {
		c.fail("workload.pages", "%d must be in 0..%d", w.Pages, maxPageLoads)
	}
	c.nonNeg("workload.think_time", w.ThinkTime)
	if w.Page == nil {
		return
	}
	p := w.Page
	if p.HTMLBytes <= 0 || p.HTMLBytes > 1<<30 {
		c.fail("workload.page.html_bytes", "%d must be in 1..%d", p.HTMLBytes, 1<<30)
	}
	objects := 1
	for i, g := range p.Groups {
		path := fmt.Sprintf("workload.page.groups[%d]", i)
		if !nameRE.MatchString(g.Name) {
			c.fail(path+".name", "%q must be letters, digits and -_.", g.Name)
		}
		if j := p.groupIndex(g.Name); j != i {
			c.fail(path+".name", "%q repeats group %d's name", g.Name, j)
		}
		if g.Count <= 0 || g.Count > maxPageObjects {
			c.fail(path+".count", "%d must be in 1..%d", g.Count, maxPageObjects)
		}
		objects += max(g.Count, 0)
		if g.Bytes <= 0 || g.Bytes > 1<<30 {
			c.fail(path+".bytes", "%d must be in 1..%d", g.Bytes, 1<<30)
		}
		if g.After != "" {
			if j := p.groupIndex(g.After); j < 0 || j >= i {
				c.fail(path+".after", "%q must name an earlier group (or be empty: the HTML)", g.After)
			}
		}
		if g.Urgency > 7 {
			c.fail(path+".urgency", "%d must be in 0..7 (RFC 9218)", g.Urgency)
		}
	}
	if objects > maxPageObjects {
		c.fail("workload.page.groups", "%d objects, more than %d", objects, maxPageObjects)
	}
}
