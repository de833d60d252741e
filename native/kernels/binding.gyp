{
  "targets": [
    {
      "target_name": "refract_native",
      "sources": ["src/binding.c", "src/poseidon.c", "src/base58.c", "src/msm.c", "src/fft.c", "src/groth16.c", "src/pairing.c", "src/scratch.c", "src/lightkey.c"],
      "include_dirs": ["src"],
      "defines": ["NAPI_VERSION=8"],
      "cflags!": ["-O2", "-O0", "-fno-omit-frame-pointer"],
      "cflags": ["-O3", "-std=gnu11", "-Wall", "-Wextra", "-fvisibility=hidden", "-pthread"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "GCC_OPTIMIZATION_LEVEL": "3",
        "OTHER_CFLAGS": ["-std=gnu11"]
      }
    }
  ]
}
