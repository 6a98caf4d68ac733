from sweepgen.cli import main

main()
