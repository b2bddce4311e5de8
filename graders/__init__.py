"""The source tree of the five graders.

Nothing here is imported by a grader at run time: tools/build_graders.py joins the parts each
`graders/<bench>/PARTS` lists into the single file `grade_<bench>.py` at the repository root
(the way SQLite's amalgamation is built from its src/), embedding the child programs
(`child_*.py`) as text.  See CONTRIBUTING.md.
"""
