# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/planner.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
)
