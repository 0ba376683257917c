# onnxruntime shared library for pkg/model/ort (cgo, loaded at run time).
# `make onnxruntime` fetches libonnxruntime.so 1.24.1 (CPU, linux x86_64)
# from the PyPI wheel into third_party/onnxruntime/; it is idempotent.
# pkg/model/ort finds it there, or wherever MPQ_ONNXRUNTIME_LIB points.

ONNXRUNTIME_LIB ?= third_party/onnxruntime/libonnxruntime.so

.PHONY: onnxruntime
onnxruntime: $(ONNXRUNTIME_LIB)

$(ONNXRUNTIME_LIB):
	scripts/fetch-onnxruntime.sh $(dir $@)

# `make test` fetches the library first, so pkg/model/ort's parity test runs
# instead of skipping.
TEST_DEPS += onnxruntime
