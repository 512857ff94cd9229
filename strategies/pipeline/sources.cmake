# Pipeline parallelism: GPipe, 1F1B (PipeDream-Flush), interleaved 1F1B, PipeDream-2BW.
list(APPEND STRATEGY_SOURCES
  pipeline/context_parallel.cpp
  pipeline/pipeline.cpp
  pipeline/pipeline_figures.cpp
  pipeline/pipeline_lowering.cpp
  pipeline/pipeline_schedule.cpp
  pipeline/stage_workload.cpp
  pipeline/merak_schedule.cpp
  pipeline/trirace.cpp
  pipeline/trirace_links.cpp
  pipeline/trirace_lowering.cpp
)
list(APPEND STRATEGY_TESTS
  pipeline/context_parallel_test.cpp
  pipeline/pipeline_figures_test.cpp
  pipeline/pipeline_test.cpp
  pipeline/pipeline_lowering_test.cpp
  pipeline/stage_workload_test.cpp
  pipeline/three_d_test.cpp
  pipeline/merak_schedule_test.cpp
  pipeline/trirace_links_test.cpp
  pipeline/trirace_test.cpp
)
