# Pipeline and 3D planners of the studied papers (planner.h).
list(APPEND STRATEGY_SOURCES
  planners/lower_plan.cpp
  planners/planner.cpp
  planners/planner_options.cpp
  planners/profile.cpp
  planners/merak.cpp
)
list(APPEND STRATEGY_TESTS
  planners/planner_test.cpp
  planners/lower_plan_test.cpp
  planners/profile_test.cpp
  planners/merak_test.cpp
)
