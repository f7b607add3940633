"""The dsh-fs-sftp tests run against a real OpenSSH server (``dsh_fs_sftp.testing``)."""

from dsh_fs_sftp.testing import sftp_scratch, sshd

__all__ = ["sftp_scratch", "sshd"]
