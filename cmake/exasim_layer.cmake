# One static library per layer folder; sources are the folder's .cpp files (recursively),
# except hw/bench/ which is the native runner, built separately.
function(exasim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wnon-virtual-dtor)
endfunction()

function(exasim_add_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${name}/*.cpp)
  list(FILTER sources EXCLUDE REGEX "/hw/bench/")
  if(NOT sources)
    set(sources ${PROJECT_SOURCE_DIR}/cmake/empty_layer.cpp)
  endif()
  add_library(exasim_${name} STATIC ${sources})
  target_include_directories(exasim_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(exasim_${name} PUBLIC ${ARG_DEPS})
  exasim_warnings(exasim_${name})
endfunction()
