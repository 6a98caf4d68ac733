python my_app.py ++db.user=admin db=mysql trainer.devices=[0,1,2,3] +experiment=baseline ~model.dropout
