# ezpz_runtime: the libtorch half of the runtime API (ezpz::dist::setup(),
# GradSync); the pure half is ezpz/launchers/runtime_env.cpp in ezpz_core. Built only
# with EZPZ_WITH_SMOKE, where the top level has found libtorch.
#
# It is also what users link: installed with its headers as ezpz::runtime
# (find_package(ezpz), see cmake/install.cmake and examples/). So the archive
# stands alone: it carries the few ezpz_core sources the runtime uses (address, env,
# runtime_env, rank_env, report, collectives) rather than ezpz_core and its yaml-cpp; the build
# tree's programs that link both get each object once.
if(EZPZ_WITH_SMOKE)
  add_library(ezpz_runtime STATIC ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/dist.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/grad_sync.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/runtime/listener.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/core/address.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/core/env.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/launchers/runtime_env.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/launchers/rank_env.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/smoke/report.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ezpz/smoke/collectives.cpp)
  target_include_directories(ezpz_runtime PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # Only dist.cpp includes ProcessGroupGloo.hpp: ezpz's own headers do not need Gloo's.
  target_include_directories(ezpz_runtime PRIVATE ${EZPZ_GLOO_INCLUDE_DIR})
  target_compile_features(ezpz_runtime PUBLIC cxx_std_20)
  target_link_libraries(ezpz_runtime PUBLIC fmt::fmt-header-only ${TORCH_LIBRARIES}
                                     PRIVATE $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
  # c10d's headers declare ProcessGroupGloo only under this macro.
  target_compile_definitions(ezpz_runtime PUBLIC USE_C10D_GLOO)
  # A CUDA libtorch also brings ProcessGroupNCCL (untested here: CPU-only box).
  if(TORCH_CUDA_LIBRARIES)
    target_compile_definitions(ezpz_runtime PUBLIC EZPZ_TORCH_CUDA USE_C10D_NCCL)
  endif()
  set_target_properties(ezpz_runtime PROPERTIES EXPORT_NAME runtime OUTPUT_NAME ezpz_runtime)
endif()
