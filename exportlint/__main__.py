from exportlint.cli import main

raise SystemExit(main())
