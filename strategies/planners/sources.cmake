# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/planner.cpp
  planners/link_costs.cpp
  planners/dapple.cpp
  planners/piper.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
  planners/link_costs_test.cpp
  planners/dapple_test.cpp
  planners/piper_test.cpp
)
