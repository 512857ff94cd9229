# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/lower_plan.cpp
  planners/planner.cpp
  planners/planner_options.cpp
  planners/profile.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
  planners/lower_plan_test.cpp
  planners/profile_test.cpp
)
# HPH (CLUSTER'22): topology designer, speed-weighted partition, recomputation where memory overflows.
list(APPEND STRATEGY_SOURCES
  planners/hph.cpp
  planners/hph_partition.cpp
  planners/hph_strategy.cpp
  planners/hph_topology.cpp
)
list(APPEND STRATEGY_TESTS
  planners/hph_test.cpp
  planners/hph_partition_test.cpp
  planners/hph_strategy_test.cpp
  planners/hph_topology_test.cpp
)
