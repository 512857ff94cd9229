# Sharded data parallelism (ZeRO, FSDP).
list(APPEND STRATEGY_SOURCES sharded/zero.cpp)
list(APPEND STRATEGY_TESTS sharded/zero_test.cpp)
