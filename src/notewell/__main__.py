"""``python -m notewell`` runs the command line."""

from .interfaces.cli.app import main

raise SystemExit(main())
