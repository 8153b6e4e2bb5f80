# Fake NVML libraries for nvml_probe_test (see fake_nvml.c): they let the test drive NvmlProbe's
# dlopen path on machines without the NVIDIA driver. Include this file from
# tests/agent/CMakeLists.txt after the loop that creates the agent_*_test targets.
if(TARGET agent_nvml_probe_test)
  foreach(variant full minimal)
    add_library(ringside_fake_nvml_${variant} SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.c)
    set_target_properties(ringside_fake_nvml_${variant} PROPERTIES
                          OUTPUT_NAME fake_nvml_${variant} C_VISIBILITY_PRESET default)
    add_dependencies(agent_nvml_probe_test ringside_fake_nvml_${variant})
  endforeach()
  target_compile_definitions(ringside_fake_nvml_minimal PRIVATE FAKE_NVML_MINIMAL)
endif()
# The agent on the fake NVML: a GPU another process computes on.
if(TARGET agent_foreign_gpu_process_test AND TARGET ringside_fake_nvml_full)
  add_dependencies(agent_foreign_gpu_process_test ringside_fake_nvml_full)
endif()
