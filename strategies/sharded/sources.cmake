# Sharded data parallelism (ZeRO, FSDP, HSDP).
list(APPEND STRATEGY_SOURCES sharded/zero.cpp)
list(APPEND STRATEGY_TESTS sharded/zero_test.cpp)
list(APPEND STRATEGY_SOURCES sharded/shard_groups.cpp sharded/fsdp_units.cpp)
list(APPEND STRATEGY_SOURCES sharded/hsdp.cpp sharded/hsdp_planner.cpp)
list(APPEND STRATEGY_TESTS sharded/hsdp_test.cpp sharded/hsdp_planner_test.cpp)
