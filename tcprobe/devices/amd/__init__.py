"""AMD GPUs: code objects of the v_mfma instructions, built with LLVM's AMDGPU backend."""
