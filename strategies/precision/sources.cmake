# Layer-wise low precision in data-parallel training (DPC and its uniform baseline).
list(APPEND STRATEGY_SOURCES precision/formats.cpp precision/layer_precision.cpp
     precision/precision_lowering.cpp precision/dpc.cpp precision/uniform_precision.cpp)
list(APPEND STRATEGY_TESTS precision/layer_precision_test.cpp precision/dpc_test.cpp)
