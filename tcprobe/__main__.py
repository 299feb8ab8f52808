from tcprobe.cli import main

main()
