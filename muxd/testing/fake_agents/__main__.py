from muxd.testing.fake_agents import main

raise SystemExit(main())
