"""Serve: one seeded workspace on env0's surface (a listener per env0 service, env0's /_admin JSON shapes, its auth
gate and mock-gdoc routes), recording every request a package's scripts make."""
