// Package mpqsched holds the files the module builds into its binaries: the
// EdAR model that mpquic-bench runs when -edar-model is not given, so that a
// bench binary built anywhere (go install, or the README's own-scheduler
// binary) runs EdAR without the repository beside it.
package mpqsched

import _ "embed"

// EdARModel is testdata/edar.onnx, the offline EdAR model `make train`
// builds (ONNX bytes, about 290 KB), as it was when the binary was built.
// Read it only: it is shared by every user of the package.
//
//go:embed testdata/edar.onnx
var EdARModel []byte
