# Tensor parallelism (Megatron-LM, sequence parallelism).
list(APPEND STRATEGY_SOURCES tensor/megatron.cpp tensor/tp_layer.cpp tensor/tp_subpipeline.cpp
  tensor/context_ring.cpp tensor/oases.cpp)
list(APPEND STRATEGY_TESTS tensor/megatron_test.cpp tensor/tp_subpipeline_test.cpp
  tensor/oases_test.cpp)
