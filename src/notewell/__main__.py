"""``python -m notewell`` runs the command line."""

from .interfaces.cli import main

raise SystemExit(main())
