"""Routes of the audio kernels (csrc/API_AUDIO.md): the C core for CPU tensors, the torch
reference elsewhere."""
