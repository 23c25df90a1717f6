# ezpz_runtime: the libtorch half of the runtime API (ezpz::dist::setup(),
# GradSync); the pure half is ezpz/runtime_env.cpp in ezpz_core. Built only
# with EZPZ_WITH_SMOKE, where the top level has found libtorch.
if(EZPZ_WITH_SMOKE)
  add_library(ezpz_runtime STATIC ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/dist.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/grad_sync.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/listener.cpp)
  target_link_libraries(ezpz_runtime PUBLIC ezpz_core ${TORCH_LIBRARIES})
  # c10d's headers declare ProcessGroupGloo only under this macro.
  target_compile_definitions(ezpz_runtime PUBLIC USE_C10D_GLOO)
  # A CUDA libtorch also brings ProcessGroupNCCL (untested here: CPU-only box).
  if(TORCH_CUDA_LIBRARIES)
    target_compile_definitions(ezpz_runtime PUBLIC EZPZ_TORCH_CUDA USE_C10D_NCCL)
  endif()
endif()
