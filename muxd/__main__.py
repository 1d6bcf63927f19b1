from muxd.cli.main import main

raise SystemExit(main())
