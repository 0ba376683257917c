package modelrun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpqsched/mpqsched"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/sched/edar"
)

// FindModel returns the EdAR model file for -edar-model's value given. A
// given file is used as it is (a relative name is also looked up from the
// module root above the working directory). The default ("") is, in order:
//   - testdata/edar.onnx of the module holding the working directory (the
//     model `make train` has just rebuilt);
//   - testdata/edar.onnx beside the binary's directory (bin/../testdata);
//   - the copy built into the binary (mpqsched.EdARModel), written once to
//     the temporary directory under a name carrying its SHA-256.
//
// It never depends on the working directory alone.
func FindModel(given string) (string, error) {
	if given != "" {
		return policy.Resolve(given), nil
	}
	if p := policy.Resolve(policy.DefaultModel); fileExists(p) {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		for _, p := range []string{
			filepath.Join(filepath.Dir(exe), "..", policy.DefaultModel),
			filepath.Join(filepath.Dir(exe), policy.DefaultModel),
		} {
			if fileExists(p) {
				return filepath.Clean(p), nil
			}
		}
	}
	return writeEmbeddedModel()
}

// writeEmbeddedModel writes mpqsched.EdARModel to the temporary directory
// (once per content: the name carries its hash) and returns its path.
// Concurrent callers (the virtual-time children) each write a private
// temporary file and rename it, so none reads a partial file.
func writeEmbeddedModel() (string, error) {
	sum := sha256.Sum256(mpqsched.EdARModel)
	p := filepath.Join(os.TempDir(), "mpqsched-edar-"+hex.EncodeToString(sum[:8])+".onnx")
	if st, err := os.Stat(p); err == nil && st.Size() == int64(len(mpqsched.EdARModel)) {
		return p, nil
	}
	f, err := os.CreateTemp(filepath.Dir(p), "mpqsched-edar-*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing the built-in EdAR model: %w", err)
	}
	_, err = f.Write(mpqsched.EdARModel)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing the built-in EdAR model: %w", err)
	}
	return p, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// CheckModel makes sure, before any run starts, that the runs of EdAR in
// a matrix (runs) have a usable model: without one, and unless they allow
// the fallback (-edar-fallback), the matrix is refused, so no result ever
// carries minRTT's numbers under EdAR's name. It reports the model used
// through logf.
func CheckModel(runs []Spec, logf func(string)) error {
	var f *Spec
	for i, j := range runs {
		if j.Scheduler == edar.Name || j.Scheduler == edar.NameOnline {
			f = &runs[i]
			break
		}
	}
	if f == nil {
		return nil
	}
	path, err := FindModel(f.Model)
	if err == nil {
		_, _, err = policy.Open(path, policy.Options{})
	}
	switch {
	case err == nil:
		logf("EdAR model " + path)
		return nil
	case f.Fallback:
		logf(fmt.Sprintf("no EdAR model (%v): edar and edar-o run minRTT, recorded as <name>-minrtt-fallback (-edar-fallback)", err))
		return nil
	}
	return fmt.Errorf("edar and edar-o need a model: %v; give -edar-model FILE, or -edar-fallback to run them as minRTT under the names edar-minrtt-fallback and edar-o-minrtt-fallback", err)
}
