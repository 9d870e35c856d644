"""Agent runtimes: installing notewell into their files, and what their session hooks print."""
