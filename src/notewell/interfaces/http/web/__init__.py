"""The web page for people (served by ``notewell serve`` at /): its assets and the Markdown renderer."""
