// The dialect reference in docs/dialects is the one ODS generates.
// RUN: diff %joint_obj_root/docs/Dialects/JointOps.md %joint_src_root/docs/dialects/JointOps.md
// RUN: diff %joint_obj_root/docs/Dialects/AOOps.md %joint_src_root/docs/dialects/AOOps.md
