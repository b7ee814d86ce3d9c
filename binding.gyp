{
  "targets": [
    {
      "target_name": "matte_native",
      "sources": ["native/cutout.c", "native/enlarge.c"],
      "cflags": ["-O3", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-ffp-contract=off"] }
    }
  ]
}
