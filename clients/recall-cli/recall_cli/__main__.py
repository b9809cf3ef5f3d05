from recall_cli.cli import main

raise SystemExit(main())
