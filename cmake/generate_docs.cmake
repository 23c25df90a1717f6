# Writes the shell completions and the man page by asking the built ezpz, so they
# come from the same definitions as --help. Run by the ezpz_docs target:
#   cmake -DEZPZ=path/to/ezpz -DOUT=build/share -P generate_docs.cmake
function(generate file)
  get_filename_component(dir ${OUT}/${file} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  execute_process(COMMAND ${EZPZ} ${ARGN} OUTPUT_FILE ${OUT}/${file}.tmp RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${EZPZ} ${ARGN} failed: ${status}")
  endif()
  file(RENAME ${OUT}/${file}.tmp ${OUT}/${file})  # whole or not at all
endfunction()

generate(completions/ezpz.bash completion bash)
generate(completions/_ezpz completion zsh)
generate(man/ezpz.1 man)
