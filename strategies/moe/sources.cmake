# Mixture-of-experts training: routing, DeepSpeed-MoE, FasterMoE, Prophet, Pro-Prophet.
list(APPEND STRATEGY_SOURCES
  moe/routing.cpp
  moe/routing_trace.cpp
  moe/placement.cpp
  moe/ep_groups.cpp
  moe/moe_setup.cpp
  moe/moe_cost.cpp
  moe/moe_graph.cpp
  moe/deepspeed_moe.cpp
  moe/fastermoe.cpp
  moe/prophet.cpp
  moe/pro_prophet.cpp
  moe/persistent_placement.cpp
)
list(APPEND STRATEGY_TESTS
  moe/routing_test.cpp
  moe/routing_trace_test.cpp
  moe/placement_test.cpp
  moe/moe_strategies_test.cpp
  moe/pro_prophet_test.cpp
  moe/persistent_placement_test.cpp
  moe/expert_data_parallel_test.cpp
)
