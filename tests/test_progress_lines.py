"""Progress in a pipe or a log: one line per state, the bar's close not repeated."""

import io

from cellbench.progress import _Lines


def test_the_final_state_is_one_line_even_when_the_bar_is_redrawn_narrower():
    out = io.StringIO()
    lines = _Lines(out)
    # tqdm's close repeats the last state with a later clock and rate; a shorter rate
    # leaves the bar a column wider (lan-buffers printed its last line twice).
    lines.write(
        "\rcellbench reproduce lan-buffers:  92%|###### | 4606/5000 [01:00<00:03, 107.10run/s]"
    )
    lines.write(
        "\rcellbench reproduce lan-buffers: 100%|####| 5000/5000 "
        "[01:04<00:00, 107.10run/s, storing the result]"
    )
    lines.write(
        "\rcellbench reproduce lan-buffers: 100%|#####| 5000/5000 "
        "[01:04<00:00, 77.57run/s, storing the result]"
    )
    got = out.getvalue().splitlines()
    assert len(got) == 2 and got[-1].endswith("107.10run/s, storing the result]")


def test_a_new_state_is_a_new_line():
    out = io.StringIO()
    lines = _Lines(out)
    lines.write("step: 100%|####| 5/5 [00:01<00:00, 3.2run/s]")
    lines.write("step: 100%|####| 5/5 [00:01<00:00, 3.2run/s, storing the result]")
    assert len(out.getvalue().splitlines()) == 2
