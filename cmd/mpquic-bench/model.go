package main

import "github.com/mpqsched/mpqsched/pkg/bench"

// defaultModel is the EdAR model file used when -edar-model is not given.
func defaultModel() string { return "testdata/edar.onnx" }

// configureScheduler sets up schedulers that need more than their registry
// name (EdAR's model).
func configureScheduler(r *bench.Run, j job) error { return nil }
