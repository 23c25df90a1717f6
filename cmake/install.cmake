# What `cmake --install` lays out, and the .deb CPack makes of it:
#
#   bin/ezpz                          the launcher
#   libexec/ezpz/                     ezpz-rankenv, ezpz-smoke, ezpz-stager, ezpz-probe
#   share/ezpz/machines/*.yaml        bundled machine profiles
#   share/ezpz/templates/             example PBS and Slurm job scripts
#   include/ezpz/, lib/libezpz_runtime.a, lib/cmake/ezpz/
#                                     the C++ runtime API, find_package(ezpz)
#
# (the programs' own rules are next to their targets: apps/, apps/smoke,
# apps/stager; the profiles' and templates' in the top-level CMakeLists.txt).
# Nothing is found through the prefix compiled in: ezpz finds its helpers and
# profiles relative to its own location (apps/ezpz/bundled.cpp,
# lib/ezpz/sys/world.cpp), so the tree can be moved after installing.
# A user's profiles (~/.config/ezpz/machines, EZPZ_MACHINES_PATH) override
# the bundled ones.

# Shell completions and the man page: each file put in share/completions/ or
# share/man/ is installed where bash, zsh and man look (standard places under
# the prefix). Rules for generated ones belong here too.
set(EZPZ_COMPLETIONS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/share/completions)
if(EXISTS ${EZPZ_COMPLETIONS_DIR}/ezpz.bash)
  install(FILES ${EZPZ_COMPLETIONS_DIR}/ezpz.bash RENAME ezpz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
endif()
if(EXISTS ${EZPZ_COMPLETIONS_DIR}/_ezpz)
  install(FILES ${EZPZ_COMPLETIONS_DIR}/_ezpz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
endif()
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/share/man/ezpz.1)
  install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/share/man/ezpz.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# ---- The runtime API as a CMake package: ezpz::runtime ---------------------
# Not for sanitizer builds: every target there links the sanitizer defaults,
# which no user program should get.
set(EZPZ_INSTALL_LIBEXECDIR ${CMAKE_INSTALL_LIBEXECDIR}/ezpz)
set(EZPZ_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ezpz)
if(TARGET ezpz_runtime AND NOT EZPZ_SANITIZE)
  install(TARGETS ezpz_runtime EXPORT ezpzTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(EZPZ_LIB_DIR ${CMAKE_CURRENT_SOURCE_DIR}/lib/ezpz)
  install(FILES ${EZPZ_LIB_DIR}/env.hpp ${EZPZ_LIB_DIR}/error.hpp ${EZPZ_LIB_DIR}/runtime_env.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ezpz)
  install(FILES ${EZPZ_LIB_DIR}/runtime/dist.hpp ${EZPZ_LIB_DIR}/runtime/grad_sync.hpp
                ${EZPZ_LIB_DIR}/runtime/listener.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ezpz/runtime)
  install(EXPORT ezpzTargets NAMESPACE ezpz:: DESTINATION ${EZPZ_INSTALL_CMAKEDIR})

  include(CMakePackageConfigHelpers)
  configure_package_config_file(
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ezpzConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/ezpzConfig.cmake
    INSTALL_DESTINATION ${EZPZ_INSTALL_CMAKEDIR}
    PATH_VARS CMAKE_INSTALL_BINDIR EZPZ_INSTALL_LIBEXECDIR)
  # 0.x: a minor release may change the API.
  write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ezpzConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ezpzConfig.cmake
                ${CMAKE_CURRENT_BINARY_DIR}/ezpzConfigVersion.cmake
          DESTINATION ${EZPZ_INSTALL_CMAKEDIR})
endif()

# ---- The Debian package: cpack -G DEB (in the build directory) -------------
set(CPACK_PACKAGE_NAME ezpz)
set(CPACK_PACKAGE_VENDOR "ezpz")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "launch distributed PyTorch the right way on laptops, Slurm and PBS machines")
set(CPACK_PACKAGE_DESCRIPTION
    "ezpz detects the scheduler (PBS, Slurm or none), reads the allocation, picks\n\
the machine profile and runs the right launcher line (PALS or Hydra mpiexec,\n\
mpirun, srun, torchrun) with the torch env:// contract set on every rank.\n\
ezpz test proves a machine works with a bundled libtorch trainer; ezpz doctor\n\
finds what would break a job; ezpz yeet stages environments to every node.\n\
Also the C++ runtime API for libtorch programs (find_package(ezpz),\n\
ezpz::runtime).")
set(CPACK_PACKAGE_CONTACT "ezpz maintainers <ezpz@localhost>")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ezpz_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries the programs link (libtorch, MPICH, libarchive, libc...)
# are found by dpkg-shlibdeps; mpich for its mpiexec, the local launcher.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "mpich")
# For building against ezpz::runtime; python3-torch for training scripts.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libtorch-dev, libfmt-dev, cmake")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
include(CPack)
