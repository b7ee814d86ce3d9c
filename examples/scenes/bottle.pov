#version 3.7;
#include "colors.inc"
global_settings { assumed_gamma 1.0 radiosity { pretrace_start 0.08 pretrace_end 0.01 count 120 recursion_limit 2 nearest_count 8 error_bound 0.8 } }
camera { location <0, 4.5, -15> look_at <0, 3.0, 0> angle 30 right x*image_width/image_height }
light_source { <8, 14, -10> color rgb 1.1 area_light <4,0,0>, <0,0,4>, 6, 6 adaptive 1 jitter }
light_source { <-10, 8, -6> color rgb 0.3 shadowless }
plane { y, 0 pigment { rgb <0.86,0.89,0.92> } finish { diffuse 0.85 ambient 0 } }
plane { z, 6 pigment { rgb <0.86,0.89,0.92> } finish { diffuse 0.85 ambient 0 } }
#declare Body = texture { pigment { rgb <0.1,0.32,0.22> } finish { ambient 0 diffuse 0.6 specular 0.8 roughness 0.005 reflection { 0.05 0.2 fresnel on } } }
#declare Label = texture { pigment { gradient y color_map { [0 rgb <0.95,0.9,0.78>] [0.5 rgb <0.95,0.9,0.78>] [0.5 rgb <0.75,0.55,0.2>] [0.56 rgb <0.75,0.55,0.2>] [0.56 rgb <0.95,0.9,0.78>] } scale 2.2 translate y*1.2 } finish { ambient 0 diffuse 0.8 } }
#declare Cap = texture { pigment { rgb <0.12,0.12,0.13> } finish { ambient 0 diffuse 0.5 specular 0.5 roughness 0.02 metallic } }
union {
  lathe { cubic_spline 9, <0,0>, <1.1,0>, <1.2,0.12>, <1.2,3.6>, <1.05,4.3>, <0.45,4.9>, <0.42,5.4>, <0,5.4>, <0,5.4> texture { Body } }
  cylinder { <0,1.2,0>, <0,3.3,0>, 1.215 open texture { Label } }
  cylinder { <0,5.3,0>, <0,6.1,0>, 0.5 texture { Cap } }
}
