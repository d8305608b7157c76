# expr_add_plugin(NAME SOURCES...) builds an expr plugin: a module library named NAME.so in the
# build's plugins/ folder, seeing only the public plugin header.
function(expr_add_plugin name)
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE expr::plugin_api)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${EXPR_PLUGIN_DIR}
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden)
endfunction()
