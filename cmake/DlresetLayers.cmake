# The layers as a build fact: harness/ holds what the variants share, so none of its targets may
# link a variant or the command above it; harness/sys, the operating system, links nothing of
# dlreset's. Checking the direct links of every target under a
# directory is enough: a transitive link would need a direct one from some target checked here.

# Every build-system target defined in `dir` and its subdirectories.
function(dlreset_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    dlreset_targets_under(${subdir} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Stops the configure step when a target under `dir` links one of the targets named after it.
function(dlreset_check_layers dir)
  dlreset_targets_under(${dir} targets)
  foreach(target IN LISTS targets)
    get_target_property(links ${target} LINK_LIBRARIES)
    get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links interface_links)
      if(link IN_LIST ARGN)
        file(RELATIVE_PATH where ${PROJECT_SOURCE_DIR} ${dir})
        message(FATAL_ERROR "${target} (under ${where}/) links ${link}, a layer above it. "
                            "Move the code that needs ${link} up, out of ${where}/ (docs/design.md "
                            "section 4 lists the layers).")
      endif()
    endforeach()
  endforeach()
endfunction()
