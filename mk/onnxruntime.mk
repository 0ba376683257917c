# onnxruntime shared library for pkg/model/ort (cgo, loaded at run time).
# `make onnxruntime` fetches libonnxruntime.so 1.24.1 (CPU, linux x86_64)
# from the PyPI wheel into third_party/onnxruntime/; it is idempotent.
# pkg/model/ort finds it there, or wherever MPQ_ONNXRUNTIME_LIB points.

ONNXRUNTIME_LIB ?= third_party/onnxruntime/libonnxruntime.so

.PHONY: onnxruntime onnxruntime-optional
onnxruntime: $(ONNXRUNTIME_LIB)

# For the main job: fetch the library if pip can, else say in one line that
# EdAR runs on the pure-Go backend (same decisions), and go on.
onnxruntime-optional:
	@[ -s $(ONNXRUNTIME_LIB) ] || scripts/fetch-onnxruntime.sh $(dir $(ONNXRUNTIME_LIB)) 2>/dev/null || \
	  echo "note: onnxruntime not fetched (no pip?): EdAR runs on its pure-Go backend, with the same decisions"

$(ONNXRUNTIME_LIB):
	scripts/fetch-onnxruntime.sh $(dir $@)

# `make test` fetches the library first, so pkg/model/ort's parity test runs
# instead of skipping. With MPQ_REQUIRE_ORT=1 (CI) a failed fetch fails the
# build (and the tests fail without the library); otherwise the ort tests
# skip, saying so.
TEST_DEPS += $(if $(filter 1,$(MPQ_REQUIRE_ORT)),onnxruntime,onnxruntime-optional)
