int main() { return 1; }  // placeholder until the tool lands
