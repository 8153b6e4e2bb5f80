"""ringside._env: rank, world size, local rank and rendezvous from the environments of Ringside's
agent, plain mpirun and torchrun; the agent's sink variables."""

import unittest

from ringside import _env

KEY_A = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
KEY_B = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
KEY_C = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"


class DistEnvTest(unittest.TestCase):
    def test_nothing_set_is_rank_0_of_1(self):
        env = _env.read_dist_env({})
        self.assertEqual((env.rank, env.world_size, env.local_rank, env.local_world_size),
                         (0, 1, 0, 1))
        self.assertEqual(env.launcher, "none")
        self.assertEqual(_env.rendezvous(env), ("127.0.0.1", 29500))

    def test_agent_mpirun(self):
        env = _env.read_dist_env({
            "OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
            "MASTER_ADDR": "node-1", "MASTER_PORT": "41234"})
        self.assertEqual((env.rank, env.world_size, env.local_rank, env.local_world_size),
                         (3, 4, 1, 2))
        self.assertEqual(env.launcher, "mpirun")
        self.assertEqual(_env.rendezvous(env), ("node-1", 41234))

    def test_plain_mpirun_on_one_node_defaults_the_rendezvous(self):
        env = _env.read_dist_env({
            "OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"})
        self.assertEqual(_env.rendezvous(env), ("127.0.0.1", 29500))

    def test_plain_mpirun_across_nodes_needs_master_addr_and_port(self):
        env = _env.read_dist_env({
            "OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
            "MASTER_ADDR": "node-1"})
        with self.assertRaisesRegex(ValueError, "MASTER_ADDR.*MASTER_PORT"):
            _env.rendezvous(env)

    def test_srun_alone(self):
        env = _env.read_dist_env({
            "SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1",
            "SLURM_NTASKS_PER_NODE": "2(x2)", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "21234"})
        self.assertEqual((env.rank, env.world_size, env.local_rank, env.local_world_size),
                         (3, 4, 1, 2))
        self.assertEqual(env.launcher, "srun")
        self.assertEqual(_env.rendezvous(env), ("10.0.0.1", 21234))

    def test_srun_across_nodes_without_master_addr_fails_loudly(self):
        env = _env.read_dist_env({
            "SLURM_PROCID": "2", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0",
            "SLURM_NTASKS_PER_NODE": "2"})
        with self.assertRaisesRegex(ValueError, "MASTER_ADDR"):
            _env.rendezvous(env)

    def test_torchrun(self):
        env = _env.read_dist_env({
            "RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4",
            "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29400"})
        self.assertEqual((env.rank, env.world_size, env.local_rank, env.local_world_size),
                         (5, 8, 1, 4))
        self.assertEqual(env.launcher, "torchrun")

    def test_torchrun_under_mpirun_uses_torchruns_ranks(self):
        env = _env.read_dist_env({
            "OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2",
            "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
            "RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4",
            "MASTER_ADDR": "a", "MASTER_PORT": "1"})
        self.assertEqual((env.rank, env.world_size, env.local_rank), (3, 8, 3))

    def test_rank_alone_is_not_torchrun(self):
        env = _env.read_dist_env({"RANK": "1", "OMPI_COMM_WORLD_RANK": "0",
                                  "OMPI_COMM_WORLD_SIZE": "1"})
        self.assertEqual((env.rank, env.world_size, env.launcher), (0, 1, "mpirun"))

    def test_missing_local_variables_assume_one_node(self):
        env = _env.read_dist_env({"RANK": "2", "WORLD_SIZE": "3"})
        self.assertEqual((env.local_rank, env.local_world_size), (2, 3))

    def test_bad_values_name_the_variable(self):
        cases = [
            ({"OMPI_COMM_WORLD_RANK": "x", "OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_RANK"),
            ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"}, "not below"),
            ({"OMPI_COMM_WORLD_RANK": "0"}, "OMPI_COMM_WORLD_SIZE"),
            ({"RANK": "-1", "WORLD_SIZE": "2"}, "RANK=-1"),
            ({"MASTER_PORT": "70000"}, "MASTER_PORT"),
            ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2"},
             "LOCAL_RANK"),
        ]
        for environ, message in cases:
            with self.subTest(environ=environ):
                with self.assertRaisesRegex(ValueError, message):
                    _env.read_dist_env(environ)


class AgentEnvTest(unittest.TestCase):
    def test_no_endpoint_no_agent(self):
        self.assertIsNone(_env.read_agent_env({}))
        self.assertIsNone(_env.read_agent_env({"RINGSIDE_AGENT_ENDPOINT": ""}))

    def test_ipc_endpoint(self):
        agent = _env.read_agent_env({"RINGSIDE_AGENT_ENDPOINT": "ipc:///tmp/x.sock",
                                     "RINGSIDE_RUN_ID": "run-1"})
        self.assertEqual((agent.endpoint, agent.run_id, agent.curve),
                         ("ipc:///tmp/x.sock", "run-1", False))

    def test_endpoint_without_run_id_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "RINGSIDE_RUN_ID"):
            _env.read_agent_env({"RINGSIDE_AGENT_ENDPOINT": "ipc:///tmp/x.sock"})

    def test_remote_tcp_needs_curve_keys(self):
        base = {"RINGSIDE_AGENT_ENDPOINT": "tcp://10.1.2.3:47602", "RINGSIDE_RUN_ID": "r"}
        with self.assertRaisesRegex(ValueError, "plaintext"):
            _env.read_agent_env(base)
        agent = _env.read_agent_env(base | {"RINGSIDE_AGENT_PUBLIC_KEY": KEY_A,
                                            "RINGSIDE_RUN_PUBLIC_KEY": KEY_B,
                                            "RINGSIDE_RUN_SECRET_KEY": KEY_C})
        self.assertTrue(agent.curve)
        self.assertEqual((agent.agent_public_key, agent.run_public_key, agent.run_secret_key),
                         (KEY_A, KEY_B, KEY_C))

    def test_loopback_tcp_may_be_plain(self):
        for endpoint in ("tcp://127.0.0.1:5000", "tcp://[::1]:5000", "tcp://localhost:5000"):
            agent = _env.read_agent_env({"RINGSIDE_AGENT_ENDPOINT": endpoint,
                                         "RINGSIDE_RUN_ID": "r"})
            self.assertFalse(agent.curve, endpoint)

    def test_incomplete_or_malformed_keys(self):
        base = {"RINGSIDE_AGENT_ENDPOINT": "tcp://10.1.2.3:47602", "RINGSIDE_RUN_ID": "r"}
        with self.assertRaisesRegex(ValueError, "RINGSIDE_RUN_SECRET_KEY not set"):
            _env.read_agent_env(base | {"RINGSIDE_AGENT_PUBLIC_KEY": KEY_A,
                                        "RINGSIDE_RUN_PUBLIC_KEY": KEY_B})
        with self.assertRaisesRegex(ValueError, "40 Z85"):
            _env.read_agent_env(base | {"RINGSIDE_AGENT_PUBLIC_KEY": "short",
                                        "RINGSIDE_RUN_PUBLIC_KEY": KEY_B,
                                        "RINGSIDE_RUN_SECRET_KEY": KEY_C})


if __name__ == "__main__":
    unittest.main()


class ParamsTest(unittest.TestCase):
    """ringside.params(): a sweep trial's values from RINGSIDE_PARAMS over the script's defaults."""

    def setUp(self):
        import os
        self._saved = os.environ.pop("RINGSIDE_PARAMS", None)

    def tearDown(self):
        import os
        os.environ.pop("RINGSIDE_PARAMS", None)
        if self._saved is not None:
            os.environ["RINGSIDE_PARAMS"] = self._saved

    def test_outside_a_sweep_the_defaults(self):
        import ringside
        self.assertEqual(ringside.params(), {})
        defaults = {"lr": 0.1, "width": 256}
        got = ringside.params(defaults)
        self.assertEqual(got, defaults)
        got["lr"] = 1.0  # a copy
        self.assertEqual(defaults["lr"], 0.1)

    def test_a_trials_values_win(self):
        import os
        import ringside
        os.environ["RINGSIDE_PARAMS"] = '{"lr":0.001,"hidden":[128,64],"optimizer":"adamw"}'
        self.assertEqual(ringside.params({"lr": 0.1, "width": 256}),
                         {"lr": 0.001, "width": 256, "hidden": [128, 64], "optimizer": "adamw"})

    def test_a_damaged_value_is_an_error(self):
        import os
        import ringside
        os.environ["RINGSIDE_PARAMS"] = "[1, 2]"
        with self.assertRaisesRegex(ValueError, "not a JSON object"):
            ringside.params()
        os.environ["RINGSIDE_PARAMS"] = "{lr"
        with self.assertRaisesRegex(ValueError, "is not JSON"):
            ringside.params()
