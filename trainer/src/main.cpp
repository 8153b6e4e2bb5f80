// ringside-trainer: see runTrainerProgram in ringside/trainer/trainer.h.
#include "ringside/trainer/trainer.h"

int main(int argc, char** argv) { return ringside::trainer::runTrainerProgram(argc, argv); }
