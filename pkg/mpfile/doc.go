// Package mpfile is the file download of cmd/mpquic-server and
// cmd/mpquic-client over HTTP (HTTP/3 on a multipath session, pkg/h3, or on
// the single-path baseline): Files, the handler that serves a directory
// with a SHA-256 Repr-Digest on every 200; HTTPGet, the client that checks
// it; the sender counters a server reports at StatsPath (ServerStats,
// HTTPStats); and the metrics.Result a download produces (NewResult).
package mpfile
