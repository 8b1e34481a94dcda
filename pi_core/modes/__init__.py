"""The built-in modes (text, json, rpc) registered through ``pi_modes``, and RPC's command table and client."""
