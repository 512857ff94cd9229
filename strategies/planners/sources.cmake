# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/lower_plan.cpp
  planners/planner.cpp
  planners/planner_options.cpp
  planners/profile.cpp
  planners/stage_placement.cpp
  planners/autopipe_sim.cpp
  planners/autopipe_partition.cpp
  planners/autopipe.cpp
  planners/link_load.cpp
  planners/autopipe_h.cpp
  planners/autopipe_strategy.cpp
  planners/link_costs.cpp
  planners/dapple.cpp
  planners/piper.cpp
  planners/baselines.cpp
  planners/merak.cpp
  planners/milp.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
  planners/milp_test.cpp
  planners/lower_plan_test.cpp
  planners/profile_test.cpp
  planners/autopipe_sim_test.cpp
  planners/autopipe_test.cpp
  planners/autopipe_h_test.cpp
  planners/link_costs_test.cpp
  planners/dapple_test.cpp
  planners/piper_test.cpp
  planners/baselines_test.cpp
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
  planners/merak_test.cpp
)
