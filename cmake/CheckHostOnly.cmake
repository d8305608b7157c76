# expr_check_host_only(TARGET...) fails the configuration when one of the targets links, directly or
# through any library it links, the CUDA toolkit (a CUDA:: target, or a library file named
# libcuda, libcudart or libcupti) or a stage of core/ that drives a device (device, cupti, runner),
# naming the chain that brings it in. core/CMakeLists.txt holds the analysis side to it: reading,
# judging and comparing recorded runs must build and link without CUDA (EXPR_WITH_CUDA).
# tests/link_check/ plants such a link, to show the check finds one.

# The libraries `target` links: what it links itself and what it passes on, a static library's
# private links ($<LINK_ONLY:...>) among them. Other generator expressions are kept whole, so a
# forbidden name inside one is still seen.
function(expr_linked_items target out)
  get_target_property(type ${target} TYPE)
  set(items "")
  if(NOT type STREQUAL "INTERFACE_LIBRARY" OR CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
    get_target_property(own ${target} LINK_LIBRARIES)
    if(own)
      list(APPEND items ${own})
    endif()
  endif()
  get_target_property(passed ${target} INTERFACE_LINK_LIBRARIES)
  if(passed)
    list(APPEND items ${passed})
  endif()
  list(TRANSFORM items REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1")
  list(REMOVE_DUPLICATES items)
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

function(expr_check_host_only)
  set(forbidden "^CUDA::|^expr_(device|cupti|runner)$|(^|/)lib(cuda|cudart|cupti)[._]")
  set(problems "")
  foreach(root IN LISTS ARGN)
    # Depth first, each library once per root, with the chain that reached it.
    set(stack "${root}")
    set(chain_${root} "${root}")
    set(seen "")
    while(stack)
      list(POP_BACK stack target)
      if(target IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${target})
      expr_linked_items(${target} items)
      foreach(item IN LISTS items)
        if(TARGET ${item})
          get_target_property(aliased ${item} ALIASED_TARGET)
          if(aliased)
            set(item ${aliased})
          endif()
        endif()
        if(item MATCHES "${forbidden}")
          string(APPEND problems "  ${chain_${target}} -> ${item}\n")
        elseif(TARGET ${item} AND NOT item IN_LIST seen)
          set(chain_${item} "${chain_${target}} -> ${item}")
          list(APPEND stack ${item})
        endif()
      endforeach()
    endwhile()
  endforeach()
  if(problems)
    message(FATAL_ERROR "A library of the analysis side links CUDA, or a stage that drives a device:\n${problems}"
                        "Reading, judging and comparing runs must build without the CUDA toolkit (EXPR_WITH_CUDA=OFF): "
                        "move what it needs below the runner (as outcome/placement.hpp did).")
  endif()
endfunction()
