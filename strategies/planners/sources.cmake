# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/planner.cpp
  planners/merak.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
  planners/merak_test.cpp
)
