// exasim command line: a thin main; all logic lives in the libraries and apps/cli/.
int main() { return 0; }
