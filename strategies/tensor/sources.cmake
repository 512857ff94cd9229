# Tensor parallelism (Megatron-LM, sequence parallelism).
list(APPEND STRATEGY_SOURCES tensor/megatron.cpp tensor/tp_layer.cpp)
list(APPEND STRATEGY_TESTS tensor/megatron_test.cpp)
