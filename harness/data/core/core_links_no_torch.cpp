// Links every object of dlreset_data_core (whole archive) and no LibTorch: the build fails here
// if the torch-free core, which is all a forked worker runs, ever calls into LibTorch.
int main() { return 0; }
