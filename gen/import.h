/* import.h - `specl import`: a Hugging Face config.json of a decoder
 * family (llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3_text) to a
 * commented spec of the kernels a LoRA model of it runs. import_config.c
 * reads the config, import_spec.c writes the spec, import.c is the
 * command line. */
#ifndef SPECL_IMPORT_H
#define SPECL_IMPORT_H

#include "import_model.h"

/* `specl import ARGS` (ARGV[0]: "import"): the exit status. */
int specl_import_main(int argc, char **argv);

#endif
